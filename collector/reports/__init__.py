"""The study's reports: per-study data and figures read by the staff pages, the export files
and the releases (the figures, the live status, the fitted crowd and its predictions, the interim
and target rankings, the ballots' progress, the voter and attention-check tables' headers and
thresholds). It stands below ``exports/`` and ``releases/`` and imports neither, nor the pages."""
