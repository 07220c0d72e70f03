"""The dashboard: a Flask JSON API (``/api/v1``) and pages over the brain (``scheduler-py
dashboard``, extra ``[dashboard]``).

It reads and steers only through the ports of ``scheduler_py/scheduling/dashboard_ports.py``;
``scheduler_py/cli/dashboard.py`` builds them. Modules: :mod:`.app` (the Flask app),
:mod:`.api` (JSON routes), :mod:`.pages` (HTML routes), :mod:`.views` (pure JSON shapes),
:mod:`.inputs` (parameter checks), :mod:`.token` (the bearer token), :mod:`.openapi`
(the OpenAPI document), :mod:`.cache` (the last brain status), :mod:`.planlog` (the plan
log file), :mod:`.prefetch` (aggregates read off the request path), :mod:`.limits` (what one client
may make it spend: body size, JSON nesting, what-ifs at once and their time budget).
"""
