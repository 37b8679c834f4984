"""For browser tests that save a static page themselves: the state tables it names, inline.

A static build ships each panel's table as its own file (assets/states/<ref>.js); a test
page saved by hand carries the same registrations inline, right after the switcher."""

from app import states


def table_scripts():  # -> <script> tags registering the tables the page just saved names
    return "".join(f"<script>{states.table_script(ref, table)}</script>"
                   for ref, table in states.take_tables().items())
