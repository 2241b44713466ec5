"""Ship calls the office keeps (arrival to departure) and the office's coverage alarm (G11)."""
