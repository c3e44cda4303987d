# frameworks.mk - the clients agents use (redis-cli, psql, redis-py,
# psycopg2, redis-rb, Celery, SQLAlchemy and alembic from Debian's
# packages; ioredis with BullMQ, node-redis, pg and Node's URL from the
# npm registry) given the URLs `sbx request` prints, as they are, against
# a real monitor, broker and podman (tests/frameworks/run.sh). Root; it
# starts a monitor and containers: hence the lock. Included by
# tests/tests.mk.
#
# The npm packages: the versions package-lock.json pins, `npm ci`'d into
# the build directory (no install scripts: msgpackr's optional native
# part is not built, its JavaScript serves), again only when the lock
# changes.
FW_NODE = $(O)/frameworks
$(FW_NODE)/node_modules/.package-lock.json: tests/frameworks/package.json \
		tests/frameworks/package-lock.json
	@mkdir -p $(FW_NODE)
	cp tests/frameworks/package.json tests/frameworks/package-lock.json $(FW_NODE)/
	cd $(FW_NODE) && npm ci --ignore-scripts --no-audit --no-fund
	@touch $@

frameworks: all $(FW_NODE)/node_modules/.package-lock.json
	SBX_BUILD=$(abspath $(O)) $(LOCKED) tests/frameworks/run.sh

EXTRA_TESTS += frameworks

.PHONY: frameworks
