"""The family report's page: tools/registry/report.py collects, render.py writes HTML."""
