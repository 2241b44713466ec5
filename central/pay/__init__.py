"""Pay engines: watchmen (rules P1-P7, ``central.pay.watchmen``) and the shared statement-line
type and money rounding (``central.pay.lines``) that the production-pay engines reuse."""
