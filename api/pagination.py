from rest_framework.pagination import CursorPagination, PageNumberPagination


class PagePagination(PageNumberPagination):
    """Small lists (projects, members, queues): ``?page=N&page_size=M``."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500


class IdCursorPagination(CursorPagination):
    """Large lists (turns, sentences, gold): an opaque ``cursor``, stable while rows are added."""

    page_size = 100
    page_size_query_param = "page_size"
    max_page_size = 1000
    ordering = "id"
