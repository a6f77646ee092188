from .access import projects_for


def navigation(request):
    """Projects for the navigation bar. Lazy: costs a query only when a template uses it."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    return {"nav_projects": projects_for(user)}
