"""
WSGI config for the annotator.

It exposes the WSGI callable as a module-level variable named ``application``.

For more information on this file, see
https://docs.djangoproject.com/en/5.2/howto/deployment/wsgi/
"""

import os

from django.core.wsgi import get_wsgi_application

# A server started from this module is production: production settings unless told otherwise (they refuse
# to start without a SECRET_KEY). `manage.py devserver` names the development settings explicitly.
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")

application = get_wsgi_application()
