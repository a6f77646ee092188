"""The API's JSON renderer: DRF's, writing a stored lone surrogate as U+FFFD rather than failing.

A value stored before lone surrogates were refused (``annotator.domain.storable``) cannot be written as UTF-8:
the assignment, the annotation and adjudication lists answered 500 with it. The data are walked only when DRF's
own rendering fails on one.
"""

from rest_framework.renderers import JSONRenderer

from annotator.domain.storable import readable_data


class ReadableJSONRenderer(JSONRenderer):
    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return super().render(readable_data(data), accepted_media_type, renderer_context)
