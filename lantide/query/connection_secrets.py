"""Secrets of external connections: the system keyring, or the environment. Never a file.

``.lantide/workspace.json`` lists connections without secrets. The password of connection
NAME is the keyring entry ``lantide`` / ``connection:NAME``; where no keyring exists
(CI, a headless server) the environment variable ``LANTIDE_PASSWORD_<NAME>`` (NAME upper
case, other characters as ``_``) is read instead.

A connection string may carry other secrets as well: ODBC keywords (``AccessToken=``,
``SSLPassword=``, ``ClientSecret=``, ``AwsSecretAccessKey=``, ``KeyFileContents=``,
``PW=``, ...), a URL's ``user:pass@host`` or its ``?password=`` parameter. The rule is
deny by default (:func:`is_secret_key`): a keyword not known to be harmless whose name
holds secret, key, token, pass, pw, credential or signature, or a certificate's content,
is a secret. :func:`split_secrets` takes them out;
each goes to the keyring entry ``connection:NAME:KEY`` (environment:
``LANTIDE_SECRET_<NAME>_<KEY>``), the entry in workspace.json lists only their keys
(``"secret_keys"``), and :func:`join_secrets` puts them back when connecting.
"""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Mapping

from lantide.query.errors import ConnectionProblem
from lantide.workspace import secrets

# Deny by default. A keyword (lower case, without '_', '-', '.' and spaces) whose name
# holds one of these parts names a secret, unless it is known to be harmless below:
# AwsSecretAccessKey, KeyFileContents, PW, SSLPassword, ClientSecret, AccessToken, ...
_SECRET_PARTS = ("secret", "key", "token", "pass", "pw", "credential", "signature")
# ... as does a certificate's content written inline (SSLCertContent, CertificateContents)
_CONTENT_OF = ("cert", "content")
# Keywords known to be harmless: shown as written by ``connection list`` (every other
# value is masked there) and never taken for a secret, even with a part above in them.
HARMLESS_KEYS = frozenset(
    {
        "driver", "server", "host", "hostname", "port", "database", "dbname", "db",
        "uid", "user", "username", "userid", "dsn", "schema", "catalog", "initialcatalog",
        "datasource", "addr", "address", "network", "warehouse", "role", "account",
        "region", "encrypt", "trustservercertificate", "applicationintent",
        "multisubnetfailover", "authentication", "sslmode", "timeout", "connecttimeout",
        "connectiontimeout", "logintimeout", "commandtimeout", "querytimeout",
        "applicationname", "app", "charset", "characterset", "clientencoding", "protocol",
        "trustedconnection", "integratedsecurity", "readonly", "marsconnection",
        "language", "workstationid", "wsid", "autotranslate", "quotedid", "regional",
        "ansinpw", "keystoreauthentication", "keystoreprincipalid", "columnencryption",
        "failoverpartner", "boolsaschar", "compress", "httppath", "thrifttransport",
        "authmech", "ssl", "sslverify", "options", "searchpath", "targetsessionattrs",
        "awsregion", "tokenendpoint",
        "sslkey", "sslcert", "sslrootcert", "sslcrl",  # paths of files, not their content
    }
)  # fmt: skip
_PASSWORD_WORDS = {"pwd", "password"}  # the connection's password (PWD= when connecting)

URL_USERINFO = "url:password"  # the pass of scheme://user:pass@host
_URL_USERINFO_RE = re.compile(
    r"(?P<head>[A-Za-z][A-Za-z0-9+.\-]*://[^:/@;\s{}?#]*):"
    r"(?P<secret>[^/;\s{}?#]*)@"
)  # to the last '@' of the host part
_URL_QUERY_RE = re.compile(r"(?P<sep>[?&])(?P<key>[A-Za-z0-9_.\-]+)=(?P<value>[^&;#\s{}]*)")


def _word(key: str) -> str:
    return re.sub(r"[\s_\-.]", "", key).lower()


def is_secret_key(key: str) -> bool:
    """Whether a connection-string keyword names a secret: deny by default, every name
    with a secret-like part (:data:`_SECRET_PARTS`, a certificate's content) unless it is
    one of :data:`HARMLESS_KEYS`."""
    word = _word(key)
    if word in HARMLESS_KEYS:
        return False
    return any(part in word for part in _SECRET_PARTS) or all(p in word for p in _CONTENT_OF)


def is_harmless_key(key: str) -> bool:
    return _word(key) in HARMLESS_KEYS


MASK = "***"


def masked_connection_string(text: str) -> str:
    """``text`` (already without its secrets) as ``connection list`` prints it: the value
    of every keyword not known to be harmless replaced by :data:`MASK` (a URL's query
    parameters alike), since an unknown keyword may still carry something private."""
    shown: list[str] = []
    for raw, key, value in _odbc_parts(text):
        if "://" in key or (not key and "://" in raw):  # a URL: its query parameters
            shown.append(
                _URL_QUERY_RE.sub(
                    lambda m: (
                        m.group(0)
                        if is_harmless_key(m.group("key"))
                        else f"{m.group('sep')}{m.group('key')}={MASK}"
                    ),
                    raw,
                )
            )
        elif key and value and not is_harmless_key(key):
            shown.append(raw[: raw.index("=") + 1] + MASK)
        else:
            shown.append(raw)
    return ";".join(shown)


def _odbc_parts(text: str) -> list[tuple[str, str, str]]:
    """``key=value;...`` as (raw part, key, value); a braced value may hold ';' and '}}'."""
    parts, i, n = [], 0, len(text)
    while i < n:
        start = i
        eq = text.find("=", i)
        semi = text.find(";", i)
        if eq < 0 or (0 <= semi < eq):  # no '=' in this part: keep it as it is
            end = n if semi < 0 else semi
            parts.append((text[start:end], "", ""))
            i = end + 1
            continue
        key = text[i:eq].strip()
        j = eq + 1
        while j < n and text[j] == " ":
            j += 1
        if j < n and text[j] == "{":
            k = j + 1
            while k < n:
                if text[k] == "}":
                    if k + 1 < n and text[k + 1] == "}":
                        k += 2
                        continue
                    break
                k += 1
            value = text[j + 1 : k].replace("}}", "}")
            end = text.find(";", k)
        else:
            end = text.find(";", j)
            value = text[j : end if end >= 0 else n].strip()
        end = n if end < 0 else end
        parts.append((text[start:end], key, value))
        i = end + 1
    return parts


def split_secrets(connection_string: str) -> tuple[str, dict[str, str]]:
    """The connection string without its secrets, and the secrets by key as written
    (``PWD``, ``AccessToken``, ...; a URL's password as :data:`URL_USERINFO`, its query
    parameter as ``url?password``)."""
    found: dict[str, str] = {}
    kept: list[str] = []
    for raw, key, value in _odbc_parts(connection_string):
        if key and is_secret_key(key):
            found[key] = value
        elif raw.strip() or kept:
            kept.append(raw)
    text = ";".join(kept)
    if connection_string.rstrip().endswith(";") and text and not text.endswith(";"):
        text += ";"

    def userinfo(match: re.Match[str]) -> str:
        found[URL_USERINFO] = match.group("secret")
        return match.group("head") + "@"

    text = _URL_USERINFO_RE.sub(userinfo, text, count=1)

    def query(match: re.Match[str]) -> str:
        if not is_secret_key(match.group("key")):
            return match.group(0)
        found["url?" + match.group("key")] = match.group("value")
        return match.group("sep") if match.group("sep") == "?" else ""

    if "://" in text:
        text = _URL_QUERY_RE.sub(query, text)
        text = re.sub(r"\?&", "?", text)
        text = re.sub(r"\?(?=[;\s]|$)", "", text)
    return text, found


def join_secrets(connection_string: str, found: Mapping[str, str | None]) -> str:
    """The connection string with ``found`` put back (the inverse of :func:`split_secrets`
    up to the order of keywords)."""
    from lantide.query.external import odbc_braced

    text = connection_string
    if found.get(URL_USERINFO) is not None:
        text = re.sub(
            r"([A-Za-z][A-Za-z0-9+.\-]*://[^:/@;\s{}?#]*)@",
            lambda m: f"{m.group(1)}:{found[URL_USERINFO]}@",
            text,
            count=1,
        )
    params = [(k[4:], v) for k, v in found.items() if k.startswith("url?") and v is not None]
    if params:
        url = re.search(r"[A-Za-z][A-Za-z0-9+.\-]*://[^;\s{}]*", text)
        if url:
            extra = "&".join(f"{k}={v}" for k, v in params)
            joined = url.group(0) + ("&" if "?" in url.group(0) else "?") + extra
            text = text[: url.start()] + joined + text[url.end() :]
    pairs = [
        f"{k}={odbc_braced(v)}"
        for k, v in found.items()
        if v is not None and k != URL_USERINFO and not k.startswith("url?")
    ]
    if pairs:
        text = text.rstrip(";") + (";" if text.strip() else "") + ";".join(pairs)
    return text


def _entry(name: str) -> str:
    return f"connection:{name}"


def _secret_entry(name: str, key: str) -> str:
    return f"connection:{name}:{key.lower()}"


def env_var(name: str) -> str:
    return "LANTIDE_PASSWORD_" + re.sub(r"[^0-9A-Za-z]", "_", name).upper()


def secret_env_var(name: str, key: str) -> str:
    return "LANTIDE_SECRET_" + re.sub(r"[^0-9A-Za-z]", "_", f"{name}_{key}").upper()


def is_password_key(key: str) -> bool:
    return key.lower() in _PASSWORD_WORDS


def get_connection_password(name: str) -> str | None:
    value = os.environ.get(env_var(name))
    if value:
        return value
    return _keyring_get(_entry(name))


def get_connection_secret(name: str, key: str) -> str | None:
    value = os.environ.get(secret_env_var(name, key))
    if value:
        return value
    return _keyring_get(_secret_entry(name, key))


def _keyring_get(entry: str) -> str | None:
    if not secrets.keyring_available():
        return None
    import keyring

    try:
        return keyring.get_password(secrets.SERVICE, entry)
    except Exception:
        return None


def set_connection_password(name: str, password: str) -> None:
    _keyring_set(name, _entry(name), password)


def set_connection_secret(name: str, key: str, value: str) -> None:
    _keyring_set(name, _secret_entry(name, key), value, secret_env_var(name, key))


def _keyring_set(name: str, entry: str, value: str, variable: str | None = None) -> None:
    if not secrets.keyring_available():
        raise _no_keyring(name, "no system keyring is available", variable)
    import keyring

    try:
        keyring.set_password(secrets.SERVICE, entry, value)
    except Exception as exc:
        raise _no_keyring(name, str(exc), variable) from None


def _no_keyring(name: str, detail: str, variable: str | None = None) -> ConnectionProblem:
    return ConnectionProblem(
        f"cannot store the password of connection {name!r}: {detail}",
        code="NO_KEYRING",
        hint=f"Set {variable or env_var(name)} in the environment instead; Lantide never "
        "writes passwords to disk.",
    )


def delete_connection_password(name: str) -> None:
    _keyring_delete(_entry(name))


def delete_connection_secret(name: str, key: str) -> None:
    _keyring_delete(_secret_entry(name, key))


def _keyring_delete(entry: str) -> None:
    if not secrets.keyring_available():
        return
    import keyring

    with contextlib.suppress(Exception):
        keyring.delete_password(secrets.SERVICE, entry)
