"""Voter pages (``/s/<slug>/...``) and the voting API (``/api/v1/studies/<slug>/...``)."""

from django.urls import include, path

from collector.voting import api, views

app_name = "voting"

pages = [
    path("", views.study_link, name="study"),
    path("declined/", views.declined, name="declined"),
    path("vote/", views.vote_page, name="vote"),
    path("done/", views.done_page, name="done"),
    path("wait/", views.wait_page, name="wait"),
    path("deleted/", views.deleted_page, name="deleted"),
    path("next", views.next_json, name="next"),
    path("answer", views.answer_json, name="answer"),
]

API = "api/v1/studies/<slug:slug>/"

# The API's paths in full, first: the vote resolves without descending into a nested include.
urlpatterns = [
    path(API + "votes", api.Votes.as_view(), name="api-votes"),
    path(API + "next", api.NextComparison.as_view(), name="api-next"),
    path(API + "voters", api.CreateVoter.as_view(), name="api-voters"),
    path("s/<slug:slug>/", include(pages)),
]
