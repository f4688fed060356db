"""The staff pages and the staff JSON API, every path and name; each view lives in its feature's
module (pages and API together)."""

from django.urls import include, path

from collector.staff import (
    ballots,
    checks,
    crowd,
    downloads,
    evaluations,
    figures,
    live,
    managing,
    model_pairs,
    reliability,
    study_list,
    study_new,
    study_page,
    voters,
)
from collector.voting import preview

urlpatterns = [
    path("staff/", study_list.study_list, name="staff-studies"),
    path("staff/new/", study_new.study_new, name="staff-study-new"),
    path("staff/<slug:slug>/", study_page.study_detail, name="staff-study"),
    # Managing a study (collector.staff.managing).
    path("staff/<slug:slug>/edit/", managing.study_edit, name="staff-study-edit"),
    path("staff/<slug:slug>/pause/", managing.study_pause, name="staff-study-pause"),
    path("staff/<slug:slug>/resume/", managing.study_resume, name="staff-study-resume"),
    path("staff/<slug:slug>/archive/", managing.study_archive, name="staff-study-archive"),
    path("staff/<slug:slug>/unarchive/", managing.study_unarchive, name="staff-study-unarchive"),
    path("staff/<slug:slug>/delete/", managing.study_delete, name="staff-study-delete"),
    path(
        "staff/<slug:slug>/ballots/<int:number>/open/",
        ballots.ballot_open,
        name="staff-ballot-open",
    ),
    path(
        "staff/<slug:slug>/ballots/<int:number>/close/",
        ballots.ballot_close,
        name="staff-ballot-close",
    ),
    path("staff/<slug:slug>/ranking.csv", downloads.ranking_csv, name="staff-ranking-csv"),
    path("staff/<slug:slug>/ranking.jsonl", downloads.ranking_jsonl, name="staff-ranking-jsonl"),
    path("staff/<slug:slug>/votes.csv", downloads.votes_csv, name="staff-votes-csv"),
    path("staff/<slug:slug>/items.csv", downloads.items_csv, name="staff-items-csv"),
    path("staff/<slug:slug>/gold.tsv", downloads.gold_tsv, name="staff-gold-tsv"),
    path(
        "staff/<slug:slug>/comparisons.csv", downloads.comparisons_csv, name="staff-comparisons-csv"
    ),
    path(
        "staff/<slug:slug>/gold-grouped.csv",
        downloads.gold_grouped_csv,
        name="staff-gold-grouped-csv",
    ),
    path("staff/<slug:slug>/figures/", figures.figures_page, name="staff-figures"),
    path("staff/<slug:slug>/voters/", voters.voters_page, name="staff-voters"),
    path("staff/<slug:slug>/live.json", live.live_json, name="staff-live-json"),
    path("staff/<slug:slug>/reliability/top/", reliability.top_k, name="staff-reliability-top"),
    path("staff/<slug:slug>/ballots.csv", live.ballots_csv, name="staff-ballots-csv"),
    path("staff/<slug:slug>/interim.csv", live.interim_csv, name="staff-interim-csv"),
    path("staff/<slug:slug>/voters.csv", voters.voters_csv, name="staff-voters-csv"),
    path(
        "staff/<slug:slug>/voters/<slug:pseudonym>/exclude/",
        voters.exclude,
        name="staff-voter-exclude",
    ),
    path("staff/<slug:slug>/checks/", checks.checks_page, name="staff-checks"),
    path("staff/<slug:slug>/checks.csv", checks.checks_csv, name="staff-checks-csv"),
    path("staff/<slug:slug>/crowd/", crowd.crowd_page, name="staff-crowd"),
    path("staff/<slug:slug>/crowd.json", crowd.crowd_json, name="staff-crowd-json"),
    path("staff/<slug:slug>/crowd.csv", crowd.crowd_csv, name="staff-crowd-csv"),
    path(
        "staff/<slug:slug>/checks/<int:pk>/remove/", checks.check_remove, name="staff-check-remove"
    ),
    path(
        "staff/<slug:slug>/figures/<slug:name>.<str:fmt>",
        figures.figure_file,
        name="staff-figure-file",
    ),
    path("staff/<slug:slug>/dataset.json", downloads.dataset_json, name="staff-dataset-json"),
    path("staff/<slug:slug>/try/", include(preview.urlpatterns)),  # "try as a voter"
    path("staff/<slug:slug>/models/", evaluations.evaluation_new, name="staff-evaluation-new"),
    path(
        "staff/<slug:slug>/models/status", evaluations.evaluation_status, name="staff-eval-status"
    ),
    path(
        "staff/<slug:slug>/models/leaderboard.csv",
        evaluations.leaderboard_csv,
        name="staff-leaderboard-csv",
    ),
    path(
        "staff/<slug:slug>/models/leaderboard.json",
        evaluations.leaderboard_json,
        name="staff-leaderboard-json",
    ),
    path("staff/<slug:slug>/models/compare/", model_pairs.compare, name="staff-models-compare"),
    path(
        "staff/<slug:slug>/models/<int:pk>/",
        evaluations.evaluation_detail,
        name="staff-evaluation",
    ),
    path(
        "staff/<slug:slug>/models/<int:pk>/evaluation.json",
        evaluations.evaluation_json,
        name="staff-evaluation-json",
    ),
    path(
        "staff/<slug:slug>/models/<int:pk>/ranks.<str:fmt>",
        evaluations.evaluation_figure,
        name="staff-evaluation-figure",
    ),
    path(
        "staff/<slug:slug>/models/<int:pk>/delete/",
        evaluations.evaluation_delete,
        name="staff-evaluation-delete",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/ranking",
        downloads.RankingView.as_view(),
        name="api-staff-ranking",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/votes",
        downloads.VotesView.as_view(),
        name="api-staff-votes",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/comparisons",
        downloads.ComparisonsView.as_view(),
        name="api-staff-comparisons",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/evaluations",
        evaluations.EvaluationsView.as_view(),
        name="api-staff-evaluations",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/evaluations/paired",
        model_pairs.PairedView.as_view(),
        name="api-staff-evaluations-paired",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/evaluations/<int:pk>",
        evaluations.EvaluationView.as_view(),
        name="api-staff-evaluation",
    ),
    path("api/v1/staff/studies/<slug:slug>/live", live.LiveView.as_view(), name="api-staff-live"),
    path(
        "api/v1/staff/studies/<slug:slug>/reliability",
        reliability.ReliabilityView.as_view(),
        name="api-staff-reliability",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/voters",
        voters.VotersView.as_view(),
        name="api-staff-voters",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/voters/<slug:pseudonym>/exclude",
        voters.ExcludeView.as_view(),
        name="api-staff-voter-exclude",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/checks",
        checks.ChecksView.as_view(),
        name="api-staff-checks",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/figures",
        figures.FiguresView.as_view(),
        name="api-staff-figures",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/crowd",
        crowd.CrowdView.as_view(),
        name="api-staff-crowd",
    ),
]
