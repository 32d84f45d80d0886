"""Project plumbing: settings, URLs, WSGI, environment, logging, health, database routing
and timeouts, request/response wrappers, the console entry point.
"""
