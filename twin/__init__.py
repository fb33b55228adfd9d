"""twin: a digital twin of AI-training network fabrics."""

__version__ = "0.1.0"
