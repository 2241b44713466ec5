"""The watchman's screen (``portgate edge display``): a separate process that follows the gate's
journal READ-ONLY and serves one full-screen page on loopback (docs/gate.md "The screen")."""
