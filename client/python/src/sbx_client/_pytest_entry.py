"""The ``pytest11`` entry point (``sbx``): loads the plugin,
:mod:`sbx_client.pytest_plugin`, by its module name. pytest registers a
module named by ``-p`` or by a conftest's ``pytest_plugins`` under that
name and skips a second load of the same name; registered directly under
the entry point's name, the plugin would be registered a second time
beside ``-p sbx_client.pytest_plugin``, which pytest refuses ("Plugin
already registered"). ``-p no:sbx`` still leaves the plugin out."""

pytest_plugins = ["sbx_client.pytest_plugin"]
