"""The rooms of the :class:`~farmlib.pipeline.Farm` facade: data, models, annotators (one question, one room)."""
