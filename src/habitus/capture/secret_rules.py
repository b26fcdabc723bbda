"""The secret shapes redaction looks for: provider tokens, private keys, credentials in context.

Where the rules come from: the provider-token rules are adapted from gitleaks' published default
rule set (`config/gitleaks.toml` of github.com/gitleaks/gitleaks, MIT licence; rule ids are kept in
the comments) — the prefixed tokens whose literal prefix lets a rule run only where that prefix
occurs. They were rewritten for Python's `re` (no inline flag groups), made a little looser where a
real key would otherwise slip through (a truncated OpenAI key, any `sk-ant-…` version), and the
word-boundary checks are lookbehinds. `detect-secrets` (PyPI) was evaluated and not used: its
per-line plugin engine ran at 4.3 MB/s with only its regex plugins on real sessions (0.3 MB/s
with the entropy plugins, which flagged 47,333 strings in 1,809 lines), far below the ingest
target, and it has no rules for Anthropic, Hugging Face or empty-user URLs (docs/capture.md).

Each rule is `(kind, keywords, pattern)`: `keywords` are lower-case literals, one of which must
occur in the lower-cased text before the pattern runs (one combined search finds them all). A
pattern with a `value` group has only that group replaced, so the text stays readable
(`Authorization: Basic [REDACTED:authorization]`); otherwise the whole match is.

Secret *names* (`password=…`, `{"api_key": …}`) are recognised by `secret_name_strength`, shared
by the text rules and the structure-aware redaction of JSON values.
"""

from __future__ import annotations

import re

from habitus.core.lazyre import lazy_re

_B = r"(?<![A-Za-z0-9_])"  # the token does not continue a longer word ("task-…" is not an OpenAI key)

TOKEN_RULES: tuple[tuple[str, tuple[str, ...], str], ...] = (
    # private-key (gitleaks), widened to PGP blocks and to a block cut off before its END line
    ("private_key", ("-----begin",),
     r"-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]{0,20000}?"
     r"-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[^\"'`]*)"),
    ("anthropic_key", ("sk-ant-",), _B + r"sk-ant-[a-z0-9]{2,10}-[A-Za-z0-9_\-]{20,}"),  # anthropic-api-key
    ("openai_key", ("sk-",), _B + r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),  # openai-api-key
    ("stripe_key", ("sk_", "rk_"), _B + r"[sr]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}"),  # stripe-access-token
    ("stripe_key", ("whsec_",), _B + r"whsec_[A-Za-z0-9]{20,}"),
    ("github_token", ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), _B + r"gh[pousr]_[A-Za-z0-9]{30,}"),  # github-*
    ("github_token", ("github_pat_",), _B + r"github_pat_\w{22,}"),  # github-fine-grained-pat
    ("gitlab_token", ("glpat-", "gldt-", "glft-", "glrt-", "glsoat-", "glffct-", "glcbt-", "glagent-", "gloas-",
                      "glimt-", "glptt-"),
     _B + r"gl(?:pat|dt|ft|rt|soat|ffct|cbt|agent|oas|imt|ptt)-[\w\-]{20,}"),  # gitlab-*
    ("gitlab_token", ("gr1348941",), _B + r"GR1348941[\w\-]{20,}"),  # gitlab-rrt
    ("aws_access_key", ("akia", "asia", "abia", "acca", "a3t", "agpa", "aida", "aroa", "anpa", "anva", "aipa"),
     _B + r"(?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}"),
    ("slack_token", ("xox",), _B + r"xox[abposre]-[A-Za-z0-9\-]{10,}"),  # slack-*-token
    ("slack_token", ("xapp-",), _B + r"xapp-\d-[A-Za-z0-9\-]{10,}"),  # slack-app-token
    ("slack_webhook", ("hooks.slack.com",), r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9+/_\-]+"),
    ("google_key", ("aiza",), _B + r"AIza[\w\-]{35}"),  # gcp-api-key
    ("google_token", ("ya29.",), _B + r"ya29\.[\w\-]{20,}"),
    ("huggingface_token", ("hf_",), _B + r"hf_[A-Za-z0-9]{30,}"),  # huggingface-access-token
    ("huggingface_token", ("api_org_",), _B + r"api_org_[A-Za-z0-9]{30,}"),  # huggingface-organization-api-token
    ("sendgrid_key", ("sg.",), _B + r"SG\.[\w\-]{16,32}\.[\w\-]{16,64}"),  # sendgrid-api-token
    ("npm_token", ("npm_",), _B + r"npm_[A-Za-z0-9]{36}"),  # npm-access-token
    ("pypi_token", ("pypi-age",), _B + r"pypi-AgE[\w\-]{50,}"),  # pypi-upload-token
    ("jwt", ("eyj",), _B + r"eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # jwt
    ("digitalocean_token", ("_v1_",), _B + r"do[opr]_v1_[a-f0-9]{64}"),  # digitalocean-*
    ("databricks_token", ("dapi",), _B + r"dapi[a-f0-9]{32}(?:-\d)?"),  # databricks-api-token
    ("shopify_token", ("shpat_", "shpca_", "shppa_", "shpss_"), _B + r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}"),
    ("linear_key", ("lin_api_",), _B + r"lin_api_[A-Za-z0-9]{40}"),  # linear-api-key
    ("vault_token", ("hvs.", "hvb."), _B + r"hv[sb]\.[\w\-]{90,300}"),  # vault-service-token, vault-batch-token
    ("doppler_token", ("dp.pt.",), _B + r"dp\.pt\.[A-Za-z0-9]{43}"),  # doppler-api-token
    ("planetscale_token", ("pscale_",), _B + r"pscale_(?:tkn|oauth|pw)_[\w=.\-]{32,64}"),  # planetscale-*
    ("postman_key", ("pmak-",), _B + r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}"),  # postman-api-token
    ("pulumi_token", ("pul-",), _B + r"pul-[a-f0-9]{40}"),  # pulumi-api-token
    ("rubygems_token", ("rubygems_",), _B + r"rubygems_[a-f0-9]{48}"),  # rubygems-api-token
    ("sentry_token", ("sntrys_", "sntryu_"), _B + r"sntry[su]_[\w+/=]{40,}"),  # sentry-*-token
    ("grafana_token", ("glc_", "glsa_"), _B + r"gl(?:c|sa)_[A-Za-z0-9+/_=]{32,400}"),  # grafana-*
    ("age_secret_key", ("age-secret-key-1",), r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"),
    ("perplexity_key", ("pplx-",), _B + r"pplx-[A-Za-z0-9]{48}"),  # perplexity-api-key
    ("notion_token", ("ntn_",), _B + r"ntn_\d{11}[A-Za-z0-9]{35}"),  # notion-api-token
    ("sendinblue_key", ("xkeysib-",), _B + r"xkeysib-[a-f0-9]{64}-[A-Za-z0-9]{16}"),  # sendinblue-api-token
    ("square_token", ("sq0atp-", "sq0csp-"), _B + r"sq0(?:atp|csp)-[\w\-]{22,60}"),  # square-access-token
    ("heroku_key", ("hrku-",), _B + r"HRKU-AA[\w\-]{58}"),  # heroku-api-key-v2
    ("flyio_token", ("fo1_", "fm2_", "fm1"),
     _B + r"(?:fo1_[\w\-]{43}|fm1[ar]_[A-Za-z0-9+/]{100,}|fm2_[A-Za-z0-9+/]{100,})"),  # flyio-access-token
    ("onepassword_token", ("ops_eyj",), _B + r"ops_eyJ[A-Za-z0-9+/]{250,}={0,3}"),
    ("azure_ad_secret", ("q~",), r"(?<![\w~.])[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}"),  # azure-ad-client-secret
    ("telegram_token", (":aa",), _B + r"\d{8,10}:AA[A-Za-z0-9_\-]{33}"),
    ("mailchimp_key", ("-us",), r"(?<![A-Za-z0-9])[a-f0-9]{32}-us\d{1,2}(?![A-Za-z0-9])"),
    ("azure_storage_key", ("accountkey=", "sharedaccesskey="),
     r"(?i:AccountKey|SharedAccessKey)=(?P<value>[A-Za-z0-9+/=]{20,})"),  # detect-secrets' azure plugin shape
    # credentials in context: only the secret part is replaced
    ("authorization", ("authorization",),
     r"(?i:authorization)[\"']?\s{0,3}[:=]\s{0,3}[\"']?(?:(?i:bearer|basic|token|digest|bot|apikey|sso-key)\s+)?"
     r"(?P<value>[A-Za-z0-9._~+/=:\-]{8,})"),
    ("bearer", ("bearer",), r"(?i:bearer)\s+(?P<value>[A-Za-z0-9._~+/\-]{16,}=*)"),
    ("url_credentials", ("://",), r"://[^/\s:@\"'<>]{0,256}:(?P<value>[^/\s\"'<>]{1,256})@"),  # user may be empty
    ("curl_user", ("curl",),  # curl-auth-user
     r"\bcurl\b[^\n]*?\s(?:-u|--user)(?:=|\s+)[\"']?[^\s:\"']*:(?P<value>[^\s\"']+)"),
    ("cli_password", ("mysql", "mariadb"),
     r"\b(?:mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlsh|mariadb(?:-dump)?)\b[^\n|;&]*?\s-p"
     r"(?P<value>[^\s\"'|;&]+)"),
    ("cli_password", ("sshpass",), r"\bsshpass\s+-p\s*(?P<value>\"[^\"\n]*\"|'[^'\n]*'|[^\s\"']+)"),
    ("cli_password", ("docker",), r"\bdocker\s+login\b[^\n]*?\s-p\s+(?P<value>[^\s\"']+)"),
    ("cli_password", ("--pass", "--token", "--api-key", "--api_key", "--secret", "--client-secret", "--auth-token",
                      "--access-token"),
     r"(?<![\w-])--(?:password|passwd|pass|token|api[-_]key|secret|client[-_]secret|auth[-_]token|access[-_]token)"
     r"\s+(?P<value>\"[^\"\n]{3,}\"|'[^'\n]{3,}'|[^\s\"'`$-][^\s\"'`]{3,})"),
)

# Kinds whose matched value can run on past a terminal line wrap (random tokens; not context rules).
WRAPPABLE = frozenset(kind for kind, _, pattern in TOKEN_RULES if "(?P<value>" not in pattern) - {"private_key"}

# --- secret names -------------------------------------------------------------------------------------------

# Words that name a secret, glued to anything before them (PGPASSWORD, dbPassword, clientsecret).
STRONG_WORDS = ("passwords", "password", "passwd", "passphrase", "secrets", "secret", "credentials", "credential",
                "apikey", "authorization", "cookie", "token")
# Words that name a secret only as a word of their own (`bypass` and `monkey` are not secrets).
WORD_ONLY = ("pass", "pwd", "auth", "key")
# Qualifiers that make `key` a secret: api_key, access-key, AccountKey, secret_key_base, ...
KEY_QUALIFIERS = ("api", "access", "secret", "private", "client", "auth", "master", "signing", "encryption", "app",
                  "account", "sharedaccess", "shared_access", "license", "session", "service", "admin", "deploy",
                  "consumer", "webhook", "storage", "subscription", "encrypt", "hmac", "jwt", "ssh")
# A trailing word that keeps the name a secret (SECRET_KEY_BASE, API_KEY_B64, PASSWORD_VALUE).
KEEP_SUFFIXES = frozenset({"base", "value", "val", "b64", "base64", "hex", "raw", "plain", "plaintext", "data", "str",
                           "string", "enc", "encrypted", "literal"})
# Names whose values must be redacted whatever they look like (any other secret name needs a token-like value).
ALWAYS = frozenset({"passwords", "password", "passwd", "passphrase", "pwd", "pass", "secrets", "secret", "credentials",
                    "credential", "authorization", "cookie"})
_NAME_PART = lazy_re(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+")


def secret_name_strength(name: str) -> int:
    """0: not a secret name; 1: a secret name whose value must look like a token; 2: redact any value.

    `name` is an identifier or JSON key (`DB_PASSWORD`, `apiKey`, `x-api-key`, `SECRET_KEY_BASE`).
    """
    if len(name) > 80 or not name:
        return 0
    parts = [p.lower() for p in _NAME_PART.findall(name)]
    while parts and parts[-1].isdigit():
        parts.pop()
    if len(parts) > 1 and parts[-1] in KEEP_SUFFIXES:
        parts.pop()
    if not parts:
        return 0
    last = parts[-1]
    if last == "key":
        if len(parts) == 1:
            return 0  # a bare `key` is React's, a keyboard's or a dict's far more often than a credential
        before = parts[-2]
        if before in KEY_QUALIFIERS or (len(parts) > 2 and parts[-3] + before in ("sharedaccess",)):
            return 2 if before in ("secret", "private", "master", "signing", "encryption") else 1
        return 0
    if last in WORD_ONLY:
        return 2 if last in ALWAYS else 1
    for word in STRONG_WORDS:
        if last.endswith(word):
            if word == "token" and last != word and not last.endswith(("accesstoken", "authtoken", "refreshtoken",
                                                                      "apitoken", "idtoken", "csrftoken")):
                return 1 if last[: -len(word)] in ("my", "bot", "api", "bearer", "session", "oauth") else 0
            return 2 if word in ALWAYS else 1
    return 0


# Values after a secret name that are code or placeholders, not secrets.
_PLACEHOLDER = lazy_re(
    r"^(?:\$?\{\{.*|\$\{.*|\$\(.*|`.*|\$[A-Za-z_][A-Za-z0-9_]*|\$\d+|%[A-Za-z_]+%|<[^>]*>|\{\{[^}]*\}\}|\{[^}]*\}"
    r"|\*{3,}|x{4,}|X{4,}|\.{3}|…|\[REDACTED.*|None|null|nil|true|false|True|False|undefined|str|string|bytes"
    r"|bool|int|number|any|Optional\[.*|SecretStr|getpass\(.*|(?:os\.|process\.env|env\.|self\.|this\.|getenv).*)$")
# `customModel.api_key`, `getToken()`, `config["key"]`, `request.form['password']`: an expression, not a literal.
_CODE_REFERENCE = lazy_re(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)+(?:[(\[].*)?$|^[A-Za-z_]\w*[(\[]")


_AUTH_SCHEME = lazy_re(r"^(?:Bearer|Basic|Token|Digest|Bot)\s+", re.IGNORECASE)


def is_placeholder(value: str) -> bool:
    """A variable reference, template slot, type name or earlier redaction: `$TOKEN`, `<your-key>`, `str`."""
    return bool(_PLACEHOLDER.match(value))


def literal_value(value: str, strength: int) -> bool:
    """Whether `value`, found after a secret name of `strength`, is a literal secret to redact."""
    value = _AUTH_SCHEME.sub("", value, count=1)
    if value.lower() in ("bearer", "basic", "token", "digest", "bot"):  # the scheme word before a redacted value
        return False
    if not value or _PLACEHOLDER.match(value) or _CODE_REFERENCE.match(value):
        return False
    if strength >= 2:
        return len(value) >= 3
    if len(value) < 8 or " " in value:
        return False
    return not (value.isalpha() and (value.islower() or len(value) < 12))  # a word is not a token
