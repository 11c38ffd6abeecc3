// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// No return value declared, so it calls tokens with and without one alike.
interface ITransferFrom {
    function transferFrom(address from, address to, uint256 value) external;
}

/// Pays many recipients in one transaction, like disperse.app on mainnet:
/// one Transfer log, or one internal ETH transfer, per recipient.
contract Disperse {
    function disperseToken(ITransferFrom token, address[] calldata recipients, uint256[] calldata values) external {
        require(recipients.length == values.length, "length mismatch");
        for (uint256 i = 0; i < recipients.length; i++) {
            token.transferFrom(msg.sender, recipients[i], values[i]);
        }
    }

    function disperseEther(address payable[] calldata recipients, uint256[] calldata values) external payable {
        require(recipients.length == values.length, "length mismatch");
        for (uint256 i = 0; i < recipients.length; i++) {
            (bool ok, ) = recipients[i].call{value: values[i]}("");
            require(ok, "send failed");
        }
    }
}
