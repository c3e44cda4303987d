"""clients.py - the Python clients of tests/frameworks/run.sh (Debian's
python3-redis, python3-psycopg2, python3-sqlalchemy, python3-celery),
each given REDIS_URL or DATABASE_URL as `sbx request` printed it:
    python3 clients.py redis-py VALUE      (sets fw:redis-py to VALUE)
    python3 clients.py psycopg2|sqlalchemy|celery
prints what it read back and exits 0, or raises. The postgres clients
each add a row named after themselves to fw_widgets, the table of
alembic's migration (alembic/versions/0001_fw_widgets.py)."""
import os
import sys


def redis_py():
    import redis
    r = redis.Redis.from_url(os.environ['REDIS_URL'], socket_timeout=10)
    r.set('fw:redis-py', sys.argv[2])
    print(r.get('fw:redis-py').decode())


def psycopg2_():
    import psycopg2
    with psycopg2.connect(os.environ['DATABASE_URL'], connect_timeout=10) as c:
        cur = c.cursor()
        cur.execute("insert into fw_widgets (name) values ('psycopg2')")
        cur.execute('select 40 + 2')
        print(cur.fetchone()[0])


def sqlalchemy_():
    import sqlalchemy as sa
    engine = sa.create_engine(os.environ['DATABASE_URL'])
    with engine.begin() as c:
        c.execute(sa.text("insert into fw_widgets (name) values ('sqlalchemy')"))
        print(c.execute(sa.text(
            "select count(*) from fw_widgets where name = 'sqlalchemy'")).scalar())


# The task runs in the worker run.sh started (celery_app.py): its result
# comes back through the result backend, with the worker's pid.
def celery():
    from celery_app import add
    total, pid = add.delay(40, 2).get(timeout=30)
    print(total, pid)


CLIENTS = {'redis-py': redis_py, 'psycopg2': psycopg2_,
           'sqlalchemy': sqlalchemy_, 'celery': celery}

if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1] not in CLIENTS:
        sys.exit('usage: clients.py ' + '|'.join(CLIENTS) + ' [VALUE]')
    CLIENTS[sys.argv[1]]()
