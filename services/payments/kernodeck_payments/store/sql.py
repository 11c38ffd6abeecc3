"""INSERT with ON CONFLICT, for whichever database the session is on."""

from sqlalchemy.dialects import postgresql, sqlite
from sqlmodel import Session


def insert_for(session: Session, table):
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    return dialect.insert(table)
