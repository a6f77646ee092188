"""The rules of the method, pure: no database, no request, no task; each module has its own unit tests."""
