"""specdec: speculative decoding made inspectable, reproducible and gradable.

The package holds the pure decoding engine (:mod:`specdec_service.engine`,
no Flask) and the stateless HTTP service around it. ``create_app`` is the
WSGI app factory (``gunicorn 'specdec_service:create_app()'``); Flask is
imported only when it is called.
"""

__version__ = "0.1.0"


def create_app(config=None):
    """Build the Flask app; ``config`` is a mapping that overrides the
    defaults (see :mod:`specdec_service.app`)."""
    from .app import create_app as _create_app

    return _create_app(config)
