"""The shared web layer every app's faces use: the API base view, the one error handler,
the body parser, throttles, pagination, OpenAPI helpers and admin building blocks.
"""
