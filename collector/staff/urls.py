"""Staff pages and the staff JSON API (exports)."""

from django.urls import path

from collector.staff import api
from collector.staff import views as staff

urlpatterns = [
    path("staff/", staff.study_list, name="staff-studies"),
    path("staff/new/", staff.study_new, name="staff-study-new"),
    path("staff/<slug:slug>/", staff.study_detail, name="staff-study"),
    path(
        "staff/<slug:slug>/ballots/<int:number>/open/", staff.ballot_open, name="staff-ballot-open"
    ),
    path(
        "staff/<slug:slug>/ballots/<int:number>/close/",
        staff.ballot_close,
        name="staff-ballot-close",
    ),
    path("staff/<slug:slug>/ranking.csv", staff.ranking_csv, name="staff-ranking-csv"),
    path("staff/<slug:slug>/votes.csv", staff.votes_csv, name="staff-votes-csv"),
    path(
        "api/v1/staff/studies/<slug:slug>/ranking",
        api.RankingView.as_view(),
        name="api-staff-ranking",
    ),
    path("api/v1/staff/studies/<slug:slug>/votes", api.VotesView.as_view(), name="api-staff-votes"),
]
