"""Toy reward plugins for the verl-rewards reference trainer."""
