"""The settings every environment shares, one module per concern; ``config.settings.base`` gathers them.

``environment`` (where the app keeps its files, how a yes/no variable reads), ``database``, ``security`` (hosts,
sign-in, lock-out, invites, the Content-Security-Policy), ``limits`` (what a request, an upload, an import or a
protocol document may hold), ``workers`` (the Celery broker and the background jobs' leases), ``cache`` (and the
sessions in it), ``llm`` (the pre-labeler's endpoints) and ``api`` (the REST framework and its schema). Each
reads the environment when imported and writes nothing.
"""
