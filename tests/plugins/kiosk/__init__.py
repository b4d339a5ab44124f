"""Tests of the kiosk plugin (reporting links); helpers in `support`."""
