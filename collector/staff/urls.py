"""The staff pages and the staff JSON API, every path and name; each view lives in its feature's
module (pages and API together)."""

from django.urls import include, path

from collector.exports import registry
from collector.staff import (
    ballots,
    checks,
    crowd,
    downloads,
    evaluations,
    figures,
    history,
    live,
    managing,
    model_pairs,
    participants,
    prolific,
    releases,
    reliability,
    study_list,
    study_new,
    study_page,
    team,
    voters,
)
from collector.voting import preview

urlpatterns = [
    path("staff/", study_list.study_list, name="staff-studies"),
    # A participant's data (collector.staff.participants).
    path("staff/participants/", participants.lookup_page, name="staff-participants"),
    path("staff/participants/export/", participants.export_json, name="staff-participant-export"),
    path("staff/participants/delete/", participants.delete, name="staff-participant-delete"),
    path("staff/<slug:slug>/rescore/", participants.rescore, name="staff-study-rescore"),
    path(
        "api/v1/staff/participants/lookup",
        participants.LookupView.as_view(),
        name="api-staff-participant-lookup",
    ),
    path(
        "api/v1/staff/participants/forget",
        participants.ForgetView.as_view(),
        name="api-staff-participant-forget",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/rescore",
        participants.RescoreView.as_view(),
        name="api-staff-study-rescore",
    ),
    path("staff/new/", study_new.study_new, name="staff-study-new"),
    path("staff/<slug:slug>/", study_page.study_detail, name="staff-study"),
    # Managing a study (collector.staff.managing).
    path("staff/<slug:slug>/edit/", managing.study_edit, name="staff-study-edit"),
    path("staff/<slug:slug>/pause/", managing.study_pause, name="staff-study-pause"),
    path("staff/<slug:slug>/resume/", managing.study_resume, name="staff-study-resume"),
    path("staff/<slug:slug>/archive/", managing.study_archive, name="staff-study-archive"),
    path("staff/<slug:slug>/unarchive/", managing.study_unarchive, name="staff-study-unarchive"),
    path("staff/<slug:slug>/delete/", managing.study_delete, name="staff-study-delete"),
    # The team and the audit trail (collector.staff.team, collector.staff.history).
    path("staff/<slug:slug>/team/", team.team_page, name="staff-team"),
    path("staff/<slug:slug>/history/", history.history_page, name="staff-history"),
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
    # Every file of the export registry, at its own path and name (collector.exports.registry).
    *(
        path(
            f"staff/<slug:slug>/{export.path}",
            downloads.export_file,
            {"export": export.name},
            name=export.url_name,
        )
        for export in registry.EXPORTS
    ),
    path("staff/<slug:slug>/figures/", figures.figures_page, name="staff-figures"),
    # Citable releases (collector.staff.releases).
    path("staff/<slug:slug>/releases/", releases.releases_page, name="staff-releases"),
    path(
        "staff/<slug:slug>/releases/<str:version>/zip",
        releases.release_zip,
        name="staff-release-zip",
    ),
    path(
        "staff/<slug:slug>/releases/<str:version>/files/<path:name>",
        releases.release_file,
        name="staff-release-file",
    ),
    path("staff/<slug:slug>/voters/", voters.voters_page, name="staff-voters"),
    path("staff/<slug:slug>/prolific/", prolific.create, name="staff-prolific-create"),
    path("staff/<slug:slug>/prolific/sync/", prolific.sync, name="staff-prolific-sync"),
    path("staff/<slug:slug>/live.json", live.live_json, name="staff-live-json"),
    path("staff/<slug:slug>/reliability/top/", reliability.top_k, name="staff-reliability-top"),
    path(
        "staff/<slug:slug>/reliability/box",
        reliability.reliability_box,
        name="staff-reliability-box",
    ),
    path(
        "staff/<slug:slug>/reliability/threshold/",
        reliability.threshold,
        name="staff-reliability-threshold",
    ),
    path(
        "staff/<slug:slug>/voters/<slug:pseudonym>/exclude/",
        voters.exclude,
        name="staff-voter-exclude",
    ),
    path("staff/<slug:slug>/checks/", checks.checks_page, name="staff-checks"),
    path("staff/<slug:slug>/crowd/", crowd.crowd_page, name="staff-crowd"),
    path(
        "staff/<slug:slug>/checks/<int:pk>/remove/", checks.check_remove, name="staff-check-remove"
    ),
    path(
        "staff/<slug:slug>/figures/<slug:name>.<str:fmt>",
        figures.figure_file,
        name="staff-figure-file",
    ),
    path("staff/<slug:slug>/try/", include(preview.urlpatterns)),  # "try as a voter"
    path("staff/<slug:slug>/models/", evaluations.evaluation_new, name="staff-evaluation-new"),
    path(
        "staff/<slug:slug>/models/status", evaluations.evaluation_status, name="staff-eval-status"
    ),
    path("staff/<slug:slug>/models/board", evaluations.evaluation_board, name="staff-eval-board"),
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
    # The rows of every file the registry gives an API, paged (downloads.ExportRowsView).
    *(
        path(
            f"api/v1/staff/studies/<slug:slug>/{export.api.path}",
            downloads.ExportRowsView.for_export(export),
            name=export.api.url_name,
        )
        for export in registry.EXPORTS
        if export.api is not None
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
        "api/v1/staff/studies/<slug:slug>/voters/find",
        voters.FindView.as_view(),
        name="api-staff-voter-find",
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
        "api/v1/staff/studies/<slug:slug>/history",
        history.HistoryView.as_view(),
        name="api-staff-history",
    ),
    path(
        "api/v1/staff/studies/<slug:slug>/crowd",
        crowd.CrowdView.as_view(),
        name="api-staff-crowd",
    ),
]
