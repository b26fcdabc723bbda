"""Secret shapes and look-alikes shared by the redaction table test and the secret-canary test.

Every secret is built by concatenation so that this file itself does not trip secret scanners.
Each shape is (name, text as it appears in a session, the secret that must never be stored).
The secrets are unique strings, so a canary test can grep files for each of them.
"""

from __future__ import annotations

_A = "Zq7" + "Xw2Rt5Yu8Io1Pa4Sd6Fg9Hj3Kl0Mn"  # random-looking filler pieces
_B = "Tr0" + "ub4dor9Kx2Vb7Nm5Qw8Er3Ty6Ui1Op"
_HEX = "9f8e" + "7d6c5b4a39281706f5e4d3c2b1a09876"

SHAPES: list[tuple[str, str, str]] = [
    ("openai", "my key is {s} ok", "sk-proj-" + "Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z"),
    ("anthropic", "ANTHROPIC key {s}", "sk-ant-api03-" + "Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0EdCbA_-zz"),
    ("github_pat_classic", "push with {s}", "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"),
    ("github_pat_fine", "token {s}", "github_pat_" + "11ABCDEFG0123456789_Zq7Xw2Rt5Yu8Io1Pa4Sd6Fg9Hj3Kl"),
    ("aws_access_key", "id {s} region", "AKIA" + "J7QX2M4N6P8R0T3V"),
    ("aws_secret", "AWS_SECRET_ACCESS_KEY = {s}", "wJalrXUtnFEMI/K7MDENG/" + "bPxRfiCYzz9Kq2LmW4"),
    ("slack_bot", "slack {s}", "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp"),
    ("slack_webhook", "POST https://{s}", "hooks.slack.com/services/" + "T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"),
    ("google_api", "maps {s}", "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q"),
    ("google_oauth", "access {s}", "ya29." + "a0AfH6SMBx" + _A),
    ("jwt", "cookie value {s}",
     "eyJ" + "hbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P"),
    ("rsa_private_key", "{s}",
     "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7bq" + _A + "\n-----END RSA PRIVATE KEY-----"),
    ("openssh_truncated", "cat id_ed25519\n{s}", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjE" + _B),
    ("pgp_private_block", "gpg --export-secret-keys\n{s}\n",
     "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGR" + _A + "\n=Xq9z\n-----END PGP PRIVATE KEY BLOCK-----"),
    ("stripe_live", "charge with {s}", "sk_live_" + "51Hx" + _A),
    ("stripe_restricted", "use {s} here", "rk_live_" + "51Hy" + _B),
    ("stripe_webhook", "webhook secret {s}", "whsec_" + _A),
    ("gitlab_pat", "git push {s}", "glpat-" + "xY3zW9vU7tS5rQ1pO2nM"),
    ("huggingface", "HF hub {s}", "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"),
    ("sendgrid", "mail {s}", "SG." + "aB3dE5fG7hI9jK1lM3nO5p.qR7sT9uV1wX3yZ5aB7cD9eF1gH3iJ5kL7mN9oP1qR3s"),
    ("npm", "//registry.npmjs.org/:_authToken {s}", "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("pypi", "twine {s}", "pypi-AgE" + "IcHlwaS5vcmcCJGI4YjI3ZDA3LTg4YzQtNDI2Ny1iNjQ5LWE1NDk0ZTk0NjQ2NQ"),
    ("url_credentials", "git clone https://bob:{s}@github.com/x/y.git", "s3cr3tpass" + "Word77"),
    ("redis_empty_user", "REDIS_URL=redis://:{s}@cache:6379/0", "r3d1s" + "Pa55word"),
    ("url_password_with_at", "postgres://app:{s}@db:5432/app", "p@ss" + "W0rd#1"),
    ("azure_account_key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};EndpointSuffix=core",
     "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw" + "=="),
    ("dotenv_secret_key_base", "SECRET_KEY_BASE={s}", _HEX + "0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
    ("dotenv_password_dollar_semicolon", "DB_PASSWORD={s}", "pa$$w0rd;" + "Zx9!"),
    ("passphrase_spaces_quoted", 'passphrase: "{s}"', "correct horse " + "battery staple 42"),
    ("passphrase_spaces_yaml", "ssh:\n  passphrase: {s}\n", "purple monkey " + "dishwasher 7"),
    ("authorization_basic", "Authorization: Basic {s}", "dXNlcjpw" + "YXNzd29yZDEyMw=="),
    ("authorization_bearer", "-H 'Authorization: Bearer {s}'", "abcdef0123456789" + "abcdef0123"),
    ("docker_auth", '{"auths": {"ghcr.io": {"auth": "{s}"}}}', "Ym9iOmdocF9" + "hYmNkZWYxMjM0NTY="),
    ("concatenated_key", 'key = "sk_live_" + "{s}"', "51Hz" + _B),
    ("terminal_wrapped_key", "$ echo $KEY\nsk-proj-" + "Q" * 20 + "R7t9\n{s}\n$ ls", "W3x5" + "Yz7Ab9Cd1Ef3"),
    ("mysql_p", "mysql -u root -h db -p{s} app", "My5ql" + "Root!Pw"),
    ("curl_user", "curl -u admin:{s} https://api.example.com", "Cu7l" + "P4ssw0rd"),
    ("sshpass", "sshpass -p {s} ssh deploy@host", "Ssh" + "Pa55!word"),
    ("docker_login", "docker login -u bob -p {s} ghcr.io", "D0cker" + "Hub!Pw9"),
    ("password_flag", "psql --password {s} -U app", "Fl4g" + "Pass!word"),
    ("token_assignment", "token: {s}", _HEX),
    ("api_key_python", 'client = Client(api_key="{s}")', "q1w2e3r4t5" + "y6u7i8o9"),
    ("vault", "VAULT_TOKEN {s}", "hvs." + "CAESI" + _A * 3),
    ("digitalocean", "doctl {s}", "dop_v1_" + _HEX + _HEX),
    ("databricks", "host {s}", "dapi" + _HEX[:32]),
    ("cookie_header", "Cookie: {s}", "sessionid=8f7e6d5c4b3a2910" + "fedcba"),
]

# Shapes that only exist as JSON structure (a key names the secret, or the key is the secret).
STRUCTURED: list[tuple[str, dict, str]] = [
    ("json_password_field", {"password": "hunter" + "2hunter"}, "hunter" + "2hunter"),
    ("json_short_password_field", {"db": {"password": "Pw" + "9!"}}, "Pw" + "9!"),
    ("json_api_key_field", {"api_key": "q1w2e3r4" + "t5y6u7i8"}, "q1w2e3r4" + "t5y6u7i8"),
    ("codex_env_dict", {"command": ["psql"], "env": {"PGPASSWORD": "Pg" + "Secret77", "PATH": "/usr/bin"}},
     "Pg" + "Secret77"),
    ("secret_as_json_key", {"sk_live_" + "51Kq" + _A: "live"}, "sk_live_" + "51Kq" + _A),
    ("headers_dict", {"headers": {"Authorization": "Basic " + "Ym9iOnNlY3JldA"}}, "Ym9iOnNlY3JldA"),
    ("numeric_password", {"password": 73519284}, "73519284"),
]

# Text that looks like a secret but is not one: must come back unchanged.
LOOKALIKES: list[str] = [
    "commit 3f2a9c1e8b7d6f5a4c3b2a1908f7e6d5c4b3a291 (HEAD -> main)",
    "session 123e4567-e89b-12d3-a456-426614174000 started",
    "Edit /home/user/project/src/app/settings.py and tests/test_settings.py",
    "max_tokens: 4096 and input_tokens: 12, token_count=12345",
    "password = os.environ['DB_PASSWORD']",
    "token = get_token()",
    "password: str",
    "apiKey: customModel.api_key || \"\"",
    "password = request.form['password']",
    "the key insight is caching; a bypass: true flag",
    "https://github.com/owner/repo.git and http://localhost:8080/api/v1",
    "def sk_learn_helper(): pass",
    "disk-usage-report-2024-01-01 task-list-for-tomorrow",
    "KEY_LENGTH=32 PASSWORD_MIN_LENGTH=12 SECRET_NAME=db-creds",
    "mysql -u root -p app < dump.sql",
    "curl -u $USER:$API_TOKEN https://api.example.com",
    "Authorization: Bearer ${TOKEN}",
    "use a Bearer token in the Authorization header",
    'parser.add_argument("--password", help="the database password")',
    "git log --author=bob --since=2024-01-01",
    "docker pull python@sha256:4a8f1e2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2d3e4f5a6b7c8d9e0f",
    'const { data: session } = useSession(); if (!session?.user) return null;',
    "export PATH=$HOME/.local/bin:$PATH",
    '{"token_type": "Bearer", "expires_in": 3600}',
    "The default password policy requires 12 characters.",
    "run `pytest -q tests/test_auth.py::test_login` and check auth.py",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "echo 'a' + 'b' + 'c'",
    "env:\n  MACOS_SIGN_PASSWORD: ${{ secrets.MACOS_SIGN_PASSWORD }}\n  TOKEN: {{ .Values.token }}",
    "`-a, --api-key <key>`API key for the service",
    "KEYCHAIN_PASSWORD=$(openssl rand -base64 32)",
]

STRUCTURED_LOOKALIKES: list[dict] = [
    {"input_tokens": 12, "output_tokens": 40, "cache_read_input_tokens": 4096},
    {"key": "Enter", "session_id": "123e4567-e89b-12d3-a456-426614174000"},
    {"auth": True, "token_type": "Bearer", "password": "${DB_PASSWORD}"},
    {"file_path": "/home/user/app/keys.py", "old_string": "a = 1", "new_string": "a = 2"},
]

# Shapes as they appear inside another JSON string (a command that echoes JSON, an escaped tool output).
ESCAPED: list[tuple[str, str, str]] = [
    ("escaped_docker_auth", 'echo "{\\"auths\\": {\\"ghcr.io\\": {\\"auth\\": \\"{s}\\"}}}"',
     "Ym9iOmdocF9" + "hYmNkZWYxMjM0NTZ4"),
    ("escaped_concatenation", 'echo "key = \\"sk_live_\\" + \\"{s}\\""', "51Hq" + _A),
]
