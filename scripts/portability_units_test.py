#!/usr/bin/env python3
"""Tests of portability_units.py's MinGW rotation (ctest: portability.units).

A throw-away git checkout with a compile database of six units: which of them one run checks, and
that the others are listed as left out. Run: python3 scripts/portability_units_test.py
"""
import json
import os
import shlex
import subprocess
import sys
import tempfile
import unittest
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, 'portability_units.py')


def git(repo, *args, env=None):
    subprocess.run(['git', '-C', repo, *args], check=True, capture_output=True, env=env)


class Rotation(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.src = os.path.join(self.tmp.name, 'src')
        self.out = os.path.join(self.tmp.name, 'pch')
        os.makedirs(self.out)
        files = {
            'core/Shared.h': '#pragma once\nint shared();\n',
            'core/Deep.h': '#pragma once\n#include "Shared.h"\n',
            'core/a.cpp': '#include "Deep.h"\nint a() { return shared(); }\n',
            'core/b.cpp': '#include <core/Other.h>\nint b();\n',
            'core/Other.h': '#pragma once\n',
            'core/win.cpp': '#if defined(Q_OS_WIN)\nint w;\n#endif\n',
            'ui/c.cpp': 'int c();\n',
            'ui/d.cpp': 'int d();\n',
            'ui/e.cpp': 'int e();\n',
        }
        for name, text in files.items():
            path = os.path.join(self.src, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'w') as h:
                h.write(text)
        self.units = ['core/a.cpp', 'core/b.cpp', 'core/win.cpp', 'ui/c.cpp', 'ui/d.cpp', 'ui/e.cpp']
        db = [{'directory': self.src, 'file': os.path.join(self.src, u),
               'command': f'g++ -I{self.src} -O2 -c {os.path.join(self.src, u)} -o {u}.o'}
              for u in self.units]
        self.db = os.path.join(self.tmp.name, 'compile_commands.json')
        with open(self.db, 'w') as h:
            json.dump(db, h)
        git(self.src, 'init', '-q')
        git(self.src, 'config', 'user.email', 't@example.invalid')
        git(self.src, 'config', 'user.name', 't')
        # Eleven old commits (a month before HEAD), then HEAD, which changes Shared.h only.
        old = dict(os.environ, GIT_AUTHOR_DATE='2026-01-01T00:00:00Z', GIT_COMMITTER_DATE='2026-01-01T00:00:00Z')
        git(self.src, 'add', '.', env=old)
        git(self.src, 'commit', '-q', '-m', 'first', env=old)
        for n in range(10):
            git(self.src, 'commit', '-q', '--allow-empty', '-m', f'old {n}', env=old)
        with open(os.path.join(self.src, 'core/Shared.h'), 'a') as h:
            h.write('int more();\n')
        new = dict(os.environ, GIT_AUTHOR_DATE='2026-02-01T00:00:00Z', GIT_COMMITTER_DATE='2026-02-01T00:00:00Z')
        git(self.src, 'commit', '-q', '-am', 'Shared.h', env=new)

    def tearDown(self):
        self.tmp.cleanup()

    def run_units(self, rotation):
        for f in os.listdir(self.out):
            os.remove(os.path.join(self.out, f))
        args = [sys.executable, SCRIPT, 'mingw', self.db, self.src, '/nonexistent/qt6',
                os.path.join(self.tmp.name, 'inc'), self.out]
        if rotation is not None:
            args.append(str(rotation))
        text = subprocess.run(args, check=True, capture_output=True, text=True).stdout
        checked = {os.path.relpath(shlex.split(line)[1], self.src) for line in text.splitlines()}
        left_path = os.path.join(self.out, 'left-out.txt')
        left = None
        if os.path.exists(left_path):
            with open(left_path) as h:
                left = [os.path.relpath(l.strip(), self.src) for l in h if not l.startswith('#')]
        return checked, left

    def in_share(self, unit, rotation):
        return zlib.crc32(unit.encode()) % rotation == 12 % rotation  # 12 commits

    def test_without_rotation_every_unit_is_checked(self):
        for rotation in (None, 1):
            checked, left = self.run_units(rotation)
            self.assertEqual(checked, set(self.units))
            self.assertIsNone(left)

    def test_rotation_keeps_reached_platform_and_share_units(self):
        rotation = 7
        checked, left = self.run_units(rotation)
        # a.cpp reaches the changed Shared.h through Deep.h; win.cpp names a platform.
        self.assertIn('core/a.cpp', checked)
        self.assertIn('core/win.cpp', checked)
        for unit in ('core/b.cpp', 'ui/c.cpp', 'ui/d.cpp', 'ui/e.cpp'):
            self.assertEqual(unit in checked, self.in_share(unit, rotation), unit)
        # Every unit is either checked or listed as left out, never both.
        self.assertEqual(checked | set(left), set(self.units))
        self.assertFalse(checked & set(left))

    def test_consecutive_commit_counts_check_every_unit(self):
        rotation = 3
        seen = set()
        new = dict(os.environ, GIT_AUTHOR_DATE='2026-02-01T01:00:00Z', GIT_COMMITTER_DATE='2026-02-01T01:00:00Z')
        for _ in range(rotation):
            checked, left = self.run_units(rotation)
            self.assertTrue(left, 'a rotation of 3 over six units leaves some out')
            seen |= checked
            git(self.src, 'commit', '-q', '--allow-empty', '-m', 'next', env=new)
        self.assertEqual(seen, set(self.units))

    def test_a_work_tree_change_is_reached(self):
        with open(os.path.join(self.src, 'core/Other.h'), 'a') as h:
            h.write('int other();\n')
        checked, _ = self.run_units(50)
        self.assertIn('core/b.cpp', checked)  # through <core/Other.h> and -I

    def test_without_git_every_unit_is_checked(self):
        subprocess.run(['rm', '-rf', os.path.join(self.src, '.git')], check=True)
        checked, left = self.run_units(3)
        self.assertEqual(checked, set(self.units))
        self.assertIsNone(left)


if __name__ == '__main__':
    unittest.main()
