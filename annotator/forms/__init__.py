"""Django forms of the HTML views, one module per feature, one form per action.

They check the shape of what a browser sends (ids are bounded non-negative
integers, enum values come from ``annotator.domain.vocabulary``, texts have a maximum
length) so that a malformed request is answered 400 before any service runs.
What the values mean (is this step asked now, may this label take a severity)
stays with the services, which answer with their own messages.
"""
