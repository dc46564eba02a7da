"""The CI system's workflow files, from the catalogue (render.py), and what their jobs run."""
