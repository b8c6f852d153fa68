"""``python -m specdec_client`` is the ``specdec`` command."""

from .cli import entry

if __name__ == "__main__":
    entry()
