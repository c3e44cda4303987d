"""celery_app.py - the Celery app of tests/frameworks/run.sh: kombu's
redis transport as the broker and redis as the result backend, both the
REDIS_URL `sbx request` printed. run.sh starts a worker on it
(`python3 -m celery -A celery_app worker --pool=solo`), so the task runs
in the worker's own process and answers with its pid."""
import os

from celery import Celery

app = Celery('fw', broker=os.environ['REDIS_URL'],
             backend=os.environ['REDIS_URL'])


@app.task
def add(x, y):
    return [x + y, os.getpid()]
