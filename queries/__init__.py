"""The query library: installed as pipeline.queries (see pyproject.toml), read with importlib.resources."""
