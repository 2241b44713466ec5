"""Route modules of the office web application; each exports ``ROUTES``."""
