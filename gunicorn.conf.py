"""gunicorn settings of the specdec service: see specdec_service/gunicorn_conf.py."""
from specdec_service.gunicorn_conf import *  # noqa: F401,F403
