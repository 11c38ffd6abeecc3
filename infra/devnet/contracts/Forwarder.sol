// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Sends the ETH it is paid on to an address in an internal call, as exchange
/// and wallet contracts pay out: the transfer shows only in the call trace.
contract Forwarder {
    /// A failed inner call does not fail the transaction (the ETH stays here).
    function forward(address payable to) external payable returns (bool ok) {
        (ok, ) = to.call{value: msg.value}("");
    }

    /// Sends, then reverts the whole transaction, inner transfer included.
    function forwardThenRevert(address payable to) external payable {
        (bool ok, ) = to.call{value: msg.value}("");
        revert(ok ? "reverted after sending" : "send failed");
    }
}
