"""ODBC connection strings for the common drivers, from host, port and database fields.

The connection layer's rule of what each driver family expects (SQL Server wants
``Server=host,port``; PostgreSQL and MySQL/MariaDB a separate ``Port=``), which SQL dialect
it speaks, and the way back from a string to the fields, so the settings page only shows
fields. User and password stay out of the string: the user is its own field of the
connection and the password lives in the keyring.
"""

from __future__ import annotations

from dataclasses import dataclass

SQLSERVER, POSTGRES, MYSQL = "sqlserver", "postgres", "mysql"


@dataclass(frozen=True)
class DriverFamily:
    key: str
    label: str
    dialect: str  # sqlglot's name
    default_port: int
    drivers: tuple[str, ...]  # the usual driver names, the preferred first
    port_in_server: bool  # "Server=host,port" instead of "Port=port"


FAMILIES = (
    DriverFamily(
        SQLSERVER,
        "SQL Server",
        "tsql",
        1433,
        ("ODBC Driver 18 for SQL Server", "ODBC Driver 17 for SQL Server", "SQL Server"),
        True,
    ),
    DriverFamily(
        POSTGRES, "PostgreSQL", "postgres", 5432, ("PostgreSQL Unicode", "PostgreSQL ANSI"), False
    ),
    DriverFamily(
        MYSQL,
        "MySQL / MariaDB",
        "mysql",
        3306,
        ("MySQL ODBC 8.0 Unicode Driver", "MariaDB ODBC 3.1 Driver"),
        False,
    ),
)


def family_of(driver: str) -> DriverFamily | None:
    """The family of a driver name (as ODBC lists it), or None when it is none of these."""
    name = (driver or "").lower()
    if "sql server" in name:
        return FAMILIES[0]
    if "postgres" in name or "psql" in name:
        return FAMILIES[1]
    if "mysql" in name or "mariadb" in name:
        return FAMILIES[2]
    return None


def dialect_for_driver(driver: str) -> str | None:
    family = family_of(driver)
    return family.dialect if family else None


def _braced(value: str) -> str:
    if any(c in value for c in ";{}=") or value != value.strip():
        return "{" + value.replace("}", "}}") + "}"
    return value


def build_connection_string(
    driver: str, host: str, port: str | int | None = None, database: str = ""
) -> str:
    """``Driver={...};Server=...;...`` for the fields given (empty ones are left out)."""
    family = family_of(driver)
    host, database = (host or "").strip(), (database or "").strip()
    port = str(port).strip() if port not in (None, "") else ""
    parts = [f"Driver={{{driver.strip()}}}"] if driver and driver.strip() else []
    if family is not None and family.port_in_server:
        if host:
            parts.append(f"Server={_braced(host + (',' + port if port else ''))}")
    else:
        if host:
            parts.append(f"Server={_braced(host)}")
        if port:
            parts.append(f"Port={_braced(port)}")
    if database:
        parts.append(f"Database={_braced(database)}")
    return ";".join(parts)


def parse_connection_string(text: str) -> dict[str, str]:
    """The ``key=value`` pairs of a connection string (keys lower-cased, braces removed)."""
    pairs: dict[str, str] = {}
    i, n = 0, len(text or "")
    while i < n:
        eq = text.find("=", i)
        if eq < 0:
            break
        key = text[i:eq].strip().strip(";").strip().lower()
        j = eq + 1
        if j < n and text[j] == "{":
            chars: list[str] = []
            j += 1
            while j < n:
                if text[j] == "}":
                    if j + 1 < n and text[j + 1] == "}":
                        chars.append("}")
                        j += 2
                        continue
                    j += 1
                    break
                chars.append(text[j])
                j += 1
            value = "".join(chars)
            semi = text.find(";", j)
            j = n if semi < 0 else semi + 1
        else:
            semi = text.find(";", j)
            value = text[j:] if semi < 0 else text[j:semi]
            j = n if semi < 0 else semi + 1
            value = value.strip()
        if key:
            pairs[key] = value
        i = j
    return pairs


def fields_of(text: str) -> dict[str, str]:
    """``driver``, ``host``, ``port`` and ``database`` read back from a connection string."""
    pairs = parse_connection_string(text)
    driver = pairs.get("driver", "")
    host = pairs.get("server") or pairs.get("host") or pairs.get("servername") or ""
    port = pairs.get("port", "")
    family = family_of(driver)
    if family is not None and family.port_in_server and "," in host:
        host, port = host.rsplit(",", 1)
    database = pairs.get("database") or pairs.get("db") or pairs.get("dbname") or ""
    return {"driver": driver, "host": host.strip(), "port": port.strip(), "database": database}
