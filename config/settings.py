"""One env-driven settings file.

With no environment at all the product runs locally: an embedded PostgreSQL with its data in
``.pgdata/``, Celery tasks executed in-process, DEBUG on. With ``DATABASE_URL=postgres://...`` and
``CELERY_BROKER_URL=redis://...`` it is the real stack. ``DJANGO_ENV=production`` turns the safe
defaults on (DEBUG off, secure cookies, HSTS) and requires ``SECRET_KEY`` and ``ALLOWED_HOSTS``.
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured
from kombu import Queue

from config import embedded_postgres
from ranking.designs import BUILT_IN_DESIGNS, use_designs

BASE_DIR = Path(__file__).resolve().parent.parent

env = environ.Env()

PRODUCTION = env.str("DJANGO_ENV", default="development") == "production"

DEBUG = env.bool("DEBUG", default=not PRODUCTION)
if PRODUCTION:
    SECRET_KEY = env.str("SECRET_KEY")  # no default: refuse to start without one
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS")
else:
    SECRET_KEY = env.str("SECRET_KEY", default="dev-only-insecure-key-change-me-in-production-0123")
    ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])
# A voter page whose form was refused (no cookie in MTurk's frame) offers the study in a new tab.
CSRF_FAILURE_VIEW = "collector.voting.views.csrf_failure"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI's files, served from here (no CDN)
    "axes",  # staff login: a lockout after repeated wrong passwords
    "rules",  # a study's roles as object permissions ({% has_perm %} in templates)
    "collector",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",
    "config.security.ContentSecurityPolicyMiddleware",
]

CONTENT_SECURITY_POLICY = env.str(
    "CONTENT_SECURITY_POLICY",
    default="default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; object-src 'none'; base-uri 'self'; frame-ancestors 'none'; "
    "form-action 'self'",
)

# Staff passwords (the login page, the staff API's basic auth, the admin): after
# AXES_FAILURE_LIMIT wrong passwords for one user name from one address, that pair is locked
# out for AXES_COOLOFF_MINUTES; a success resets the count.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
    # A study's roles (owner, editor, viewer) as object permissions: collector/access.py.
    "rules.permissions.ObjectPermissionBackend",
]
AXES_FAILURE_LIMIT = env.int("AXES_FAILURE_LIMIT", default=10)
AXES_COOLOFF_TIME = timedelta(minutes=env.int("AXES_COOLOFF_MINUTES", default=15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# PostgreSQL only. Without DATABASE_URL: the embedded PostgreSQL of config.embedded_postgres,
# data in .pgdata/, started by the first connection (config.embedded_db).
if env.str("DATABASE_URL", default=""):
    DATABASES = {"default": env.db_url("DATABASE_URL")}
else:
    DATABASES = {
        "default": {
            "ENGINE": "config.embedded_db",
            "NAME": embedded_postgres.DB_NAME,
            "USER": "postgres",
            "HOST": "127.0.0.1",
            "PORT": embedded_postgres.PORT,
        }
    }
DATABASES["default"]["CONN_MAX_AGE"] = env.int("CONN_MAX_AGE", default=60)
# Off by default: the check costs a round trip per request. After a database restart the first
# request on a stale connection answers a retryable 503 (collector.api_errors), and Django then
# replaces the connection that failed.
DATABASES["default"]["CONN_HEALTH_CHECKS"] = env.bool("CONN_HEALTH_CHECKS", default=False)
DATABASES["default"]["TEST"] = {"NAME": env.str("TEST_DATABASE_NAME", default="test_collector")}
# Behind PgBouncer in transaction pooling a server-side cursor would not outlive its transaction;
# the exports page through rows by key instead.
DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = env.bool(
    "DISABLE_SERVER_SIDE_CURSORS", default=True
)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
# The voter pages' languages (each study picks one; staff pages are in English). Native names.
LANGUAGES = [
    ("en", "English"),
    ("it", "Italiano"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("es", "Español"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
# Served at the site's root: /favicon.ico, which browsers ask for on pages that link no icon.
WHITENOISE_ROOT = BASE_DIR / "static" / "root"
STATIC_ROOT = env.path("STATIC_ROOT", default=BASE_DIR / "staticfiles")
# Uploaded model files wait here for their evaluation's job, which removes them once read: the
# web processes and the workers must share this directory (one volume in docker-compose.yml).
EVALUATION_UPLOAD_DIR = env.path("EVALUATION_UPLOAD_DIR", default=BASE_DIR / "uploads")
# Citable releases (collector.releases): each version's bundle, a folder and its zip, written
# once and never changed; the staff's Release page and the public release pages serve from here.
RELEASES_DIR = env.path("RELEASES_DIR", default=BASE_DIR / "releases")
# How long browsers and proxies may keep a public release page (its files: a year, immutable).
RELEASE_PAGE_MAX_AGE = env.int("RELEASE_PAGE_MAX_AGE", default=3600)
# The site's public address (https://host[/prefix]): a public release's CITATION.cff and
# croissant.json give its page's URL under it; unset, no release is made public.
PUBLIC_URL = (env.str("PUBLIC_URL", default=None) or "").rstrip("/")
if PUBLIC_URL and (
    not PUBLIC_URL.startswith(("https://", "http://")) or len(PUBLIC_URL.split("/")[2]) == 0
):
    raise ImproperlyConfigured(f"PUBLIC_URL {PUBLIC_URL!r} is not an http(s) address")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "evaluation_uploads": {
        "BACKEND": "django.core.files.storage.FileSystemStorage",
        "OPTIONS": {"location": str(EVALUATION_UPLOAD_DIR), "file_permissions_mode": 0o600},
    },
    "staticfiles": {
        "BACKEND": (
            "whitenoise.storage.CompressedManifestStaticFilesStorage"
            if PRODUCTION
            else "django.contrib.staticfiles.storage.StaticFilesStorage"
        )
    },
}

LOGIN_URL = "/admin/login/"
LOGIN_REDIRECT_URL = "/staff/"

# Uploaded token and item lists are parsed in memory; refuse anything larger than this.
MAX_UPLOAD_BYTES = env.int("MAX_UPLOAD_BYTES", default=5 * 1024 * 1024)
# Model evaluation: the largest scores or vectors file staff may upload (a 400,000-word,
# 300-dimension text file is about 1 GB), and the voter-bootstrap resamples of each evaluation
# (fewer for studies over 10,000 items, where each resample costs more).
EVALUATION_MAX_UPLOAD_BYTES = env.int("EVALUATION_MAX_UPLOAD_BYTES", default=1024**3)
EVALUATION_RESAMPLES = env.int("EVALUATION_RESAMPLES", default=1000)
# At most this many evaluations of one study queued or running at once (more are refused). One
# queued this long with no worker taking it is stuck and stops counting (collector.evaluation.
# queueing); beat's sweep sends a lost evaluation message again (by age, after
# EVALUATION_RESEND_SECONDS, when the broker's queue cannot be read).
EVALUATION_MAX_QUEUED = env.int("EVALUATION_MAX_QUEUED", default=5)
EVALUATION_STUCK_SECONDS = env.int("EVALUATION_STUCK_SECONDS", default=3600)
EVALUATION_RESEND_SECONDS = env.int("EVALUATION_RESEND_SECONDS", default=600)
EVALUATION_RESAMPLES_LARGE = env.int("EVALUATION_RESAMPLES_LARGE", default=200)
# The study designs offered (ranking.designs): dotted paths of Design classes, comma-separated in
# the environment, the first the default. The command lines (python -m ranking.simulate ...)
# read the same environment variable.
RANKING_DESIGNS = env.list("RANKING_DESIGNS", default=list(BUILT_IN_DESIGNS))
try:
    # Registered now, before any request: a path that is wrong stops every process (manage.py,
    # the web server's workers, the Celery worker and beat) with the path and the reason.
    use_designs(RANKING_DESIGNS)
except ValueError as exc:
    raise ImproperlyConfigured(str(exc)) from None
DATA_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES + 1024 * 1024
FILE_UPLOAD_MAX_MEMORY_SIZE = MAX_UPLOAD_BYTES + 1024 * 1024

# Celery: without a broker, tasks run in-process (eagerly) so the local demo needs nothing else.
CELERY_TASK_ALWAYS_EAGER = not env.str("CELERY_BROKER_URL", default="")
CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default="") or "memory://"
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_RESULT_BACKEND = env.str(
    "CELERY_RESULT_BACKEND", default=None if CELERY_TASK_ALWAYS_EAGER else CELERY_BROKER_URL
)
CELERY_TASK_ACKS_LATE = True  # a worker killed mid-task leaves the message for a retry
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# Two queues, so a ballot close never waits behind a long job: closes (with a finished study's
# first pooled fit, and beat's sweep) go to "closes"; evaluations, pooled refits after an
# exclusion, each ballot's reliability report and typed tops, paired model comparisons and
# release bundles (long jobs) to "evaluations". Deployments run a worker for each
# (docker-compose.yml: worker and evaluator); one worker may consume both
# (-Q closes,evaluations) where closes can wait. Both are declared, so a worker started without
# -Q (`celery -A config worker`, as Celery's docs start one) consumes both; /healthz?deep=1
# reports a queue nobody consumes.
# CELERY_QUEUE_PREFIX (none by default) names both queues apart from those of other runs on
# the same broker database: each test run takes its own, from its test database's name
# (tests/conftest.py), so that its workers never take another run's tasks.
CELERY_QUEUE_PREFIX = env.str("CELERY_QUEUE_PREFIX", default="")
CELERY_QUEUE_CLOSES = CELERY_QUEUE_PREFIX + "closes"
CELERY_QUEUE_EVALUATIONS = CELERY_QUEUE_PREFIX + "evaluations"
CELERY_TASK_DEFAULT_QUEUE = CELERY_QUEUE_EVALUATIONS
CELERY_TASK_QUEUES = [Queue(CELERY_QUEUE_CLOSES), Queue(CELERY_QUEUE_EVALUATIONS)]
CELERY_TASK_ROUTES = {
    "collector.tasks.finish_close_job": {"queue": CELERY_QUEUE_CLOSES},
    "collector.tasks.sweep_jobs": {"queue": CELERY_QUEUE_CLOSES},
    "collector.tasks.sweep_ballots": {"queue": CELERY_QUEUE_CLOSES},  # sweep_jobs' former name
    "collector.tasks.store_pooled_fit": {"queue": CELERY_QUEUE_CLOSES},
    "collector.tasks.evaluate_model": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.refit_pooled": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.build_release": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.remove_expired_identities": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.compare_models": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.study_reliability": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.settled_top_k": {"queue": CELERY_QUEUE_EVALUATIONS},
    "collector.tasks.recompute_stale": {"queue": CELERY_QUEUE_EVALUATIONS},
}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", 600)}
# A ballot still "closing" after this long is assumed lost (worker killed, broker down): the sweep
# re-enqueues its close (harmless: the close is idempotent).
STUCK_CLOSING_SECONDS = env.int("STUCK_CLOSING_SECONDS", default=120)

# Prolific's API (collector.prolific): the token is a deployment secret, read from the
# environment only (never stored, shown, logged or exported); without it the Prolific box says
# how to enable it. PROLIFIC_RESEND_SECONDS: a wave or payment job not done this long is resent.
PROLIFIC_API_TOKEN = env.str("PROLIFIC_API_TOKEN", default="")
PROLIFIC_API_URL = env.str("PROLIFIC_API_URL", default="https://api.prolific.com")
PROLIFIC_RESEND_SECONDS = env.int("PROLIFIC_RESEND_SECONDS", default=300)
CELERY_BEAT_SCHEDULE = {
    "sweep-lost-jobs": {
        "task": "collector.tasks.sweep_jobs",
        "schedule": env.float("SWEEP_SECONDS", default=60.0),
    },
    "remove-expired-identities": {  # DATA_RETENTION_DAYS
        "task": "collector.tasks.remove_expired_identities",
        "schedule": 3600.0,
    },
}
# A study's reliability after each ballot (collector.studies.reliability): voter splits of the
# split-half reliability (capped at large studies), posterior draws of the settled top, and how
# long a report may stay uncomputed before the sweep resends its job.
RELIABILITY_SPLITS = env.int("RELIABILITY_SPLITS", default=200)
RELIABILITY_RESAMPLES = env.int("RELIABILITY_RESAMPLES", default=200)
RELIABILITY_STUCK_SECONDS = env.int("RELIABILITY_STUCK_SECONDS", default=1800)

# Redis when configured (shared by all granian workers: throttling counts must be global), else
# per-process memory, which is right for the local demo and the tests.
CACHE_URL = env.str("CACHE_URL", default="") or env.str("REDIS_URL", default="")
CACHES = {
    "default": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": CACHE_URL}
        if CACHE_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Platform ids (Prolific PIDs, MTurk worker ids, participant ids) are stored only as keyed
# hashes (collector.voting.participant_ids): under this key when set, else under a key derived
# from SECRET_KEY. Set it to rotate SECRET_KEY without losing returning participants; changing
# it makes every stored id unrecognisable.
PARTICIPANT_ID_KEY = env.str("PARTICIPANT_ID_KEY", default="")
# Days after a study finished when its voters' hashed platform ids, hashed addresses and platform
# data are removed (beat, hourly): nobody can be linked to their votes any more. Unset: kept.
DATA_RETENTION_DAYS = env.int("DATA_RETENTION_DAYS", default=None)

# Lease hoarding: the voters registered from one address hold at most this many comparisons at
# once (0: no bound), and at most this share of the open ballot's comparisons (collector.voting.
# store). A lab behind one NAT gets VOTING_ADDRESS_LEASES voters working at the same time.
VOTING_ADDRESS_LEASES = env.int("VOTING_ADDRESS_LEASES", default=50)
VOTING_ADDRESS_SHARE = env.float("VOTING_ADDRESS_SHARE", default=0.5)

# How often each web process adds its rate-limit counts to the shared cache (throttling.py).
THROTTLE_SYNC_SECONDS = env.float("THROTTLE_SYNC_SECONDS", default=0.1)

REST_FRAMEWORK = {
    # The voting API's limits (collector.voting.throttling); "none" switches a limit off.
    "DEFAULT_THROTTLE_RATES": {
        # A person answers at most one comparison every second or two.
        "voting_token": env.str("VOTING_TOKEN_RATE", default="120/min"),
        # Many voters may share an address (campus NAT): generous, but bounded.
        "voting_ip": env.str("VOTING_IP_RATE", default="6000/min"),
        # Registering creates a row: the cheapest abuse, so the tightest per-address limit.
        "voting_register": env.str("VOTING_REGISTER_RATE", default="600/hour"),
    },
    # Behind N reverse proxies, the client address is the N-th from the right of X-Forwarded-For.
    "NUM_PROXIES": env.int("NUM_PROXIES", default=None),
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "collector.api_errors.api_exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Relatedness collector API",
    "DESCRIPTION": "Voting API for voters and export API for staff.",
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # <slug:...> in the URLs: without the pattern, clients (and schemathesis) may send slugs that
    # never reach a view (Django's HTML 404).
    "PATH_CONVERTER_OVERRIDES": {"slug": {"type": "string", "pattern": "^[-a-zA-Z0-9_]+$"}},
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "collector.voting.throttling.document_throttling",
    ],
}

if PRODUCTION:
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    SECURE_SSL_REDIRECT = env.bool("SECURE_SSL_REDIRECT", default=True)
    # The load balancer checks each node over plain HTTP.
    SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
    SESSION_COOKIE_SECURE = True
    CSRF_COOKIE_SECURE = True
    # MTurk shows the voter's pages in a frame on its own site: there the browser sends only
    # SameSite=None cookies (which must be Secure). "Lax" when no study runs on MTurk.
    SESSION_COOKIE_SAMESITE = env.str("COOKIE_SAMESITE", default="None")
    CSRF_COOKIE_SAMESITE = SESSION_COOKIE_SAMESITE
    SECURE_HSTS_SECONDS = env.int("SECURE_HSTS_SECONDS", default=31536000)
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_HSTS_PRELOAD = True
    SECURE_CONTENT_TYPE_NOSNIFF = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="WARNING")},
    "loggers": {"collector": {"level": env.str("LOG_LEVEL", default="INFO")}},
}
