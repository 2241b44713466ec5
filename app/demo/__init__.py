"""``portgate demo``: a whole port day on this one machine, on real protocols.

Besides the day (``scenario``, ``run``, ``cli``), the components it starts, which tests and
benchmarks start too: ``mosquitto`` (a private broker), ``pcsc`` (a private pcscd with vpcd),
``vicc`` (a virtual contactless card), ``pty_reader`` (an EM4100 serial reader on a pseudo-terminal).
"""
