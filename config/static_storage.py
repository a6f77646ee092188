"""The static files storage of production: whitenoise's compressed, hashed files, with ES module imports rewritten.

The pages' scripts are ES modules that import each other by relative path (static/js/annotation_page.js and the
modules it imports). Django rewrites those imports to the hashed names when `support_js_module_import_aggregation`
is on, so a browser never runs a new module with an old, cached dependency.
"""

from whitenoise.storage import CompressedManifestStaticFilesStorage


class ModuleAwareStaticFilesStorage(CompressedManifestStaticFilesStorage):
    support_js_module_import_aggregation = True

    def url_converter(self, name, hashed_files, template=None):
        # Only the project's own modules (static/js/) are rewritten: vendored scripts (e.g. django_htmx's extensions)
        # import paths that are not static files, and are left as they are.
        if name.endswith(".js") and not name.startswith("js/"):
            return lambda matchobj: matchobj["matched"]
        return super().url_converter(name, hashed_files, template)
