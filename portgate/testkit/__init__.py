"""Helpers that start real components for tests and the demo (shipped in the package).

``vicc``: a virtual smart card for vpcd; ``pcsc``: a private pcscd; ``pty_reader``: a pseudo-terminal
that behaves like an EM4100/RDM6300 serial reader.
"""
