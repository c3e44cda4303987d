# clients.rb - redis-rb (Debian's ruby-redis) given REDIS_URL as
# `sbx request` printed it, for tests/frameworks/run.sh:
#   ruby clients.rb VALUE
# sets fw:redis-rb to VALUE, reads it back, prints it.
require 'redis'

r = Redis.new(url: ENV.fetch('REDIS_URL'), timeout: 10)
r.set('fw:redis-rb', ARGV.fetch(0))
puts r.get('fw:redis-rb')
r.close
