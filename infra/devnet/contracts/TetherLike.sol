// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "./ERC20.sol";

/// An ERC-20 token shaped like mainnet USDT: transfer, transferFrom and approve
/// return nothing, so nothing may rely on their return value.
contract TetherLike is ERC20 {
    constructor(string memory name_, string memory symbol_, uint8 decimals_) ERC20(name_, symbol_, decimals_) {}

    function transfer(address to, uint256 value) external {
        _transfer(msg.sender, to, value);
    }

    function transferFrom(address from, address to, uint256 value) external {
        _spendAllowance(from, value);
        _transfer(from, to, value);
    }

    function approve(address spender, uint256 value) external {
        _approve(spender, value);
    }
}
