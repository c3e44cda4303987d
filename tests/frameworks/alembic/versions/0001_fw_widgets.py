"""The one migration of tests/frameworks/run.sh: the table fw_widgets,
which psql then sees and SQLAlchemy and pg write to.

Revision ID: 0001
"""
import sqlalchemy as sa
from alembic import op

revision = '0001'
down_revision = None
branch_labels = None
depends_on = None


def upgrade():
    op.create_table('fw_widgets',
                    sa.Column('id', sa.Integer, primary_key=True),
                    sa.Column('name', sa.Text, nullable=False))


def downgrade():
    op.drop_table('fw_widgets')
