//! Sans-IO wire formats of holoquic (see `docs/protocol.md`).
