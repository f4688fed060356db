"""The public release pages (no login): ``/d/<slug>/<version>/``, its files and its zip."""

from django.urls import path

from collector.releases import public

urlpatterns = [
    path("d/<slug:slug>/<str:version>/", public.release_page, name="release-page"),
    path("d/<slug:slug>/<str:version>/zip", public.release_zip, name="release-zip"),
    path("d/<slug:slug>/<str:version>/files/<path:name>", public.release_file, name="release-file"),
]
