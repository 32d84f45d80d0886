"""The human face of the registry outside the admin: the link page, its tombstone and the
quote marks.
"""
