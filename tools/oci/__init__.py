"""The OCI distribution client: what every tool that reads or writes a registry shares.

The lowest package of the project: it imports nothing else of it. Registry
strings and references (``reference``), digests (``digest``), media types
(``media``), the HTTP client with retries (``client``), credentials
(``auth``), errors (``errors``) and OCI 1.1 referrers (``referrers``).
"""
