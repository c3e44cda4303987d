"""env.py - alembic's environment for tests/frameworks/run.sh, online
mode only: the URL is DATABASE_URL as `sbx request` printed it, put in
the config with alembic's own idiom (set_main_option goes through
ConfigParser's interpolation, where a '%' is an error)."""
import os

from alembic import context
from sqlalchemy import engine_from_config, pool

config = context.config
config.set_main_option('sqlalchemy.url', os.environ['DATABASE_URL'])

engine = engine_from_config(config.get_section(config.config_ini_section),
                            prefix='sqlalchemy.', poolclass=pool.NullPool)
with engine.connect() as connection:
    context.configure(connection=connection)
    with context.begin_transaction():
        context.run_migrations()
