"""Access secrets at rest: encrypted with the key from PROVISIONING_SECRET_KEY, readable only by this service."""

import json
from dataclasses import asdict

from cryptography.fernet import Fernet, InvalidToken

from kernodeck_provisioning.domain import Access


class SecretBox:
    def __init__(self, key: str):
        self._fernet = Fernet(key.encode())

    def seal(self, access: Access) -> str:
        return self._fernet.encrypt(json.dumps(asdict(access)).encode()).decode()

    def open(self, sealed: str) -> Access:
        try:
            return Access(**json.loads(self._fernet.decrypt(sealed.encode())))
        except InvalidToken:
            raise ValueError("the access secret was sealed with another key") from None


def new_key() -> str:
    return Fernet.generate_key().decode()
