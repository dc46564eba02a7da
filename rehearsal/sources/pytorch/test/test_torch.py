"""A first test of the installed torch (rehearsal stand-in)."""

import unittest

import torch


class TestTorch(unittest.TestCase):
    def test_hip_build(self) -> None:
        self.assertTrue(torch.version.hip)
        self.assertIsNone(torch.version.cuda)


if __name__ == "__main__":
    unittest.main()
